package awsclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/netguard"
)

// MaxErrorBytes bounds the reason a failed call reports.
const MaxErrorBytes = 200

// ResponseStatus is the HTTP status of a successful call, 200 when the SDK
// kept no response to read it from.
func ResponseStatus(metadata middleware.Metadata) int {
	if resp, ok := awsmiddleware.GetRawResponse(metadata).(*smithyhttp.Response); ok && resp != nil {
		return resp.StatusCode
	}
	return http.StatusOK
}

// DescribeError turns a failed call of service ("SQS", "S3") into the HTTP
// status, when the service answered, and a short reason free of creds.
func DescribeError(service string, creds Credentials, attemptCtx context.Context, err error, timeout time.Duration) (int, string) {
	status := 0
	if respErr, ok := errors.AsType[*awshttp.ResponseError](err); ok {
		status = respErr.HTTPStatusCode()
	}
	// Scrubbed before it is cut, so no part of a secret survives the cut.
	return status, clip.String(creds.Scrub(reason(service, attemptCtx, err, timeout, status)), MaxErrorBytes)
}

// reason is the unscrubbed reason of a failed call. Some calls (S3's
// HeadBucket) answer without a body, so a status alone is often all there
// is.
func reason(service string, attemptCtx context.Context, err error, timeout time.Duration, status int) string {
	if refused, ok := errors.AsType[*netguard.RefusedError](err); ok {
		return "destination refused: " + refused.Error()
	}
	if apiErr, ok := errors.AsType[smithy.APIError](err); ok {
		text := service + " error " + apiErr.ErrorCode()
		if status != 0 {
			text = "HTTP " + strconv.Itoa(status) + ", " + text
		}
		if msg := apiErr.ErrorMessage(); msg != "" {
			text += ": " + msg
		}
		return text
	}
	if errors.Is(attemptCtx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("no response within %s", timeout)
	}
	if netErr, ok := errors.AsType[net.Error](err); ok && netErr.Timeout() {
		return fmt.Sprintf("no response within %s", timeout)
	}
	if errors.Is(err, context.Canceled) {
		return "attempt cancelled"
	}
	if status != 0 {
		return "HTTP " + strconv.Itoa(status) + " " + http.StatusText(status)
	}
	// The SDK's wrappers ("operation error SQS: SendMessage, https response
	// error StatusCode: 0, RequestID: , request send failed, Post …") add
	// length, not meaning; the innermost transport error is the reason.
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		return urlErr.Err.Error()
	}
	if sendErr, ok := errors.AsType[*smithyhttp.RequestSendError](err); ok && sendErr.Err != nil {
		return sendErr.Err.Error()
	}
	if opErr, ok := errors.AsType[*smithy.OperationError](err); ok && opErr.Err != nil {
		return opErr.Err.Error()
	}
	return err.Error()
}
