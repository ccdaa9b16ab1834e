// hubctl portal: small enhancements only; every page works without them.
// Times show in the viewer's zone (UTC stays on hover), and copy buttons
// copy what they point at.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var when = new Date(el.getAttribute("datetime"));
    if (!isNaN(when)) { el.textContent = format.format(when); }
  });
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) { return; }
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        button.textContent = "Copied";
      });
    });
  });
});

// The live tail: rows from the server's event stream, each delivery one
// row, updated in place as it changes. Text only: nothing from the
// stream is parsed as HTML.
document.addEventListener("DOMContentLoaded", function () {
  var table = document.getElementById("live");
  if (!table || !window.EventSource) { return; }
  var rows = document.getElementById("live-rows");
  var format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  var tones = { succeeded: "ok", dead: "bad" };
  var source = new EventSource(table.getAttribute("data-src"));
  source.addEventListener("delivery", function (message) {
    var d = JSON.parse(message.data);
    var row = document.getElementById("live-" + d.id);
    var fresh = !row;
    if (fresh) {
      row = document.createElement("tr");
      row.id = "live-" + d.id;
    }
    row.replaceChildren();
    var state = document.createElement("span");
    state.className = "badge " + (tones[d.state] || "warn");
    state.textContent = d.state;
    var link = document.createElement("a");
    link.href = d.url;
    link.textContent = d.id.slice(0, 13) + "…";
    var created = document.createElement("time");
    created.dateTime = d.created_at;
    created.title = d.created_at;
    created.textContent = format.format(new Date(d.created_at));
    [state, link, d.event_type, String(d.attempts), d.last_status || "—", created].forEach(function (content) {
      var cell = document.createElement("td");
      if (typeof content === "string") { cell.textContent = content; } else { cell.appendChild(content); }
      row.appendChild(cell);
    });
    if (fresh) { rows.insertBefore(row, rows.firstChild); }
  });
});

// Subscription forms: of the fields that belong to one choice (an auth
// type, a SASL mechanism, a NATS login), show only the chosen one's.
// Without scripts every group shows, each under a legend naming its
// choice, and the hub ignores the groups not chosen.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("fieldset.when[data-when]").forEach(function (group) {
    var chooser = group.form && group.form.elements.namedItem(group.getAttribute("data-when"));
    if (!chooser) { return; }
    var values = group.getAttribute("data-values").split(" ");
    var update = function () { group.hidden = values.indexOf(chooser.value) < 0; };
    chooser.addEventListener("change", update);
    update();
  });
});
