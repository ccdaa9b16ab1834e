package maintenance

import (
	"context"
	"time"
)

// deadLetterReportInterval spaces the reports of dead letter windows: a
// window gathers a minute (SPEC §11), so its report comes at most this
// much after its minute.
const deadLetterReportInterval = 10 * time.Second

// deadLetterReports writes hub.deliveries_dead_lettered for the windows of
// dead letters whose minute is over and which no later dead letter of
// their subscription and reason closed (Dispatcher.ReportDeadLetters).
//
// Leader: every delivering instance: each run takes the windows no other
// run holds (SKIP LOCKED), and a window is reported in the transaction
// that removes it, so none is reported twice.
func deadLetterReports(o Options) Service {
	return Service{
		Name: "dead_letter_reports", Interval: deadLetterReportInterval, Leader: EveryInstance,
		RunOnce: func(ctx context.Context, now time.Time) error {
			_, err := o.Dispatcher.ReportDeadLetters(ctx, now)
			return err
		},
	}
}
