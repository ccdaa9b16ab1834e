// A reader of a hubctl S3 subscription's bucket: each event is an object
// at <prefix><tenant>/<yyyy>/<mm>/<dd>/<hh>/<event id>, its bytes the event
// data, its metadata the lerian-* values. A retry overwrites the same key,
// so the key is the event's identity: each is read once.
package main

import (
	"context"
	"io"
	"log"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func main() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	client := s3.NewFromConfig(cfg)
	bucket := os.Getenv("S3_BUCKET")
	// One hour of one tenant's events, as in events/acme/2026/03/05/02/.
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(os.Getenv("S3_PREFIX"))})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			log.Fatal(err)
		}
		for _, entry := range page.Contents {
			object, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: entry.Key})
			if err != nil {
				log.Fatal(err)
			}
			data, err := io.ReadAll(object.Body)
			_ = object.Body.Close()
			if err != nil {
				log.Fatal(err)
			}
			m := object.Metadata // keys lowercased: lerian-event-id, …
			log.Printf("event %s (%s) of tenant %s, schema %s, %s: %s", m["lerian-event-id"],
				m["lerian-event-type"], m["lerian-tenant-id"], m["lerian-schema-version"], aws.ToString(object.ContentType), data)
		}
	}
}
