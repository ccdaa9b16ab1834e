// A small hubctl client in TypeScript on the types openapi-typescript
// generates from the hub's OpenAPI document (docs/api.md, Generating a
// client):
//
//   hubctl api openapi > hubctl.openapi.json
//   npx --yes openapi-typescript@7.13.0 hubctl.openapi.json -o hubctl-api.d.ts
//
// It creates a pull subscription, lists a subscription's dead deliveries
// and reads the `code` of an error answer. docs/examples checks that it
// typechecks against the current document.
import type { components, paths } from "./hubctl-api";

type Schemas = components["schemas"];
export type Subscription = Schemas["Subscription"];
export type SubscriptionCreate =
  paths["/v1/subscriptions"]["post"]["requestBody"]["content"]["application/json"];
export type CreatedSubscription =
  paths["/v1/subscriptions"]["post"]["responses"]["201"]["content"]["application/json"];
export type DeliveryPage =
  paths["/v1/subscriptions/{id}/deliveries"]["get"]["responses"]["200"]["content"]["application/json"];
export type DeliveryState = Schemas["DeliveryState"];

/** An error answer of the hub: programs switch on `code`, people read `message`. */
export class HubError extends Error {
  constructor(
    readonly status: number,
    readonly body: Schemas["Error"],
  ) {
    super(`${body.code}: ${body.message}`);
  }

  get code(): string {
    return this.body.code;
  }
}

export class Hub {
  constructor(
    private readonly baseURL: string,
    private readonly token: string,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.token}` };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
    }
    if (method === "POST") {
      // A retry with the same key gets the first answer instead of the work done twice.
      headers["Idempotency-Key"] = crypto.randomUUID();
    }
    const resp = await fetch(this.baseURL + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed: unknown = await resp.json();
    if (!resp.ok) {
      throw new HubError(resp.status, parsed as Schemas["Error"]);
    }
    return parsed as T;
  }

  createSubscription(input: SubscriptionCreate): Promise<CreatedSubscription> {
    return this.call<CreatedSubscription>("POST", "/v1/subscriptions", input);
  }

  listDeliveries(subscriptionID: string, state?: DeliveryState, cursor?: string): Promise<DeliveryPage> {
    const query = new URLSearchParams();
    if (state !== undefined) query.set("state", state);
    if (cursor !== undefined) query.set("cursor", cursor);
    return this.call<DeliveryPage>(
      "GET",
      `/v1/subscriptions/${encodeURIComponent(subscriptionID)}/deliveries?${query}`,
    );
  }
}

/** Where a subscription sends its events, read from the discriminated `sink` union. */
export function destination(sub: Subscription): string {
  const sink = sub.sink;
  switch (sink.type) {
    case "webhook":
      return sink.url;
    case "pull":
      return "pulled with GET /v1/events";
    case "sqs":
      return sink.queue_url;
    case "eventbridge":
      return `${sink.region}/${sink.event_bus}`;
    case "rabbitmq":
      return `${sink.url} exchange ${sink.exchange}`;
    case "nats":
      return `${sink.url} subject ${sink.subject}`;
    case "s3":
      return `s3://${sink.bucket}/${sink.prefix ?? ""}`;
    case "kafka":
      return `${sink.brokers.join(",")} topic ${sink.topic}`;
    case "pubsub":
      return `projects/${sink.project}/topics/${sink.topic}${sink.endpoint ? ` at ${sink.endpoint}` : ""}`;
  }
}

export async function example(hub: Hub): Promise<void> {
  const created = await hub.createSubscription({
    name: "ledger feed",
    sink: { type: "pull" },
    event_types: ["transaction.*"],
  });
  console.log(`created ${created.id}, ${destination(created)}`);

  let cursor: string | undefined;
  do {
    const page = await hub.listDeliveries(created.id, "dead", cursor);
    for (const d of page.items) {
      console.log(d.id, d.event_type, d.dead_reason ?? "", d.last_status ?? "no status");
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);

  try {
    await hub.listDeliveries("not-a-subscription");
  } catch (err) {
    if (err instanceof HubError && err.code === "subscription_not_found") {
      console.log("no such subscription");
    } else {
      throw err;
    }
  }
}
