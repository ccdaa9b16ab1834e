package netguard

import (
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url     string
		wantErr string // "" means accepted
	}{
		{"https://hooks.example.com/hubctl", ""},
		{"http://hooks.example.com:8080/a?b=c#d", ""},
		{"HTTPS://Hooks.Example.COM/", ""},
		{"https://[2001:4860::1]:443/x", ""},
		{"https://203.0.113.5/", ""}, // addresses are judged at dial time, not here
		{"https://hooks.example.com:65535/", ""},
		{"https://hooks.example.com:/", ""}, // empty port: the scheme's default

		{"", "absolute URL"},
		{"/relative/path", "absolute URL"},
		{"hooks.example.com/x", "absolute URL"},
		{"ftp://hooks.example.com/", "scheme must be https or http"},
		{"file:///etc/passwd", "scheme must be https or http"},
		{"gopher://127.0.0.1:25/", "scheme must be https or http"},
		{"javascript:alert(1)", "scheme must be https or http"},
		{"http:hooks.example.com", "scheme://host/path"},
		{"https://user:pass@hooks.example.com/", "user information"},
		{"https://token@hooks.example.com/", "user information"},
		{"https:///path-only", "must have a host"},
		{"https://:443/", "must have a host"},
		{"https://hooks.example.com:0/", "port must be between 1 and 65535"},
		{"https://hooks.example.com:65536/", "port must be between 1 and 65535"},
		{"https://hooks.example.com:99999999999999999999/", "port must be between 1 and 65535"},
		{"https://hooks.example.com:http/", "not a valid URL"},
		{"https://hooks.example.com/\x7f", "not a valid URL"},
		{"https://[::1/", "not a valid URL"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			err := CheckURL(tc.url)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckURL(%q) = %v, want nil", tc.url, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckURL(%q) = %v, want an error mentioning %q", tc.url, err, tc.wantErr)
			}
		})
	}
}

func TestCheckURLNeverEchoesTheURL(t *testing.T) {
	for _, raw := range []string{
		"ftp://hooks.example.com/?token=s3cr3t-t0ken",
		"https://user:s3cr3t-t0ken@hooks.example.com/",
		"https://hooks.example.com:0/?token=s3cr3t-t0ken",
		"https://hooks.example.com/\x7f?token=s3cr3t-t0ken",
	} {
		err := CheckURL(raw)
		if err == nil {
			t.Fatalf("CheckURL(%q) = nil, want an error", raw)
		}
		if strings.Contains(err.Error(), "s3cr3t-t0ken") {
			t.Errorf("CheckURL(%q) = %q, which repeats part of the URL", raw, err)
		}
	}
}

func FuzzCheckURL(f *testing.F) {
	f.Add("https://hooks.example.com/x?y=z")
	f.Add("http://[::ffff:127.0.0.1]:80/")
	f.Add("https://u:p@h/")
	f.Fuzz(func(t *testing.T, raw string) {
		if CheckURL(raw) != nil {
			return
		}
		// Whatever is accepted has a host and an http(s) scheme.
		if !strings.HasPrefix(strings.ToLower(raw), "http://") && !strings.HasPrefix(strings.ToLower(raw), "https://") {
			t.Fatalf("CheckURL accepted %q", raw)
		}
	})
}

func TestCheckTarget(t *testing.T) {
	tests := []struct {
		raw   string
		rules TargetRules
		ok    bool
	}{
		{"https://hooks.example.com/in?token=x", TargetRules{}, true},
		{"https://hooks.example.com/in?token=x", TargetRules{BaseOnly: true}, false},
		{"https://sqs.example.com/#frag", TargetRules{BaseOnly: true}, false},
		{"https://10.0.0.1/in", TargetRules{}, false},
		{"https://10.0.0.1/in", TargetRules{AllowPrivate: true}, true},
		{"https://internal.example/in", TargetRules{}, true}, // names are judged at dial time
		{"https://example.com/" + strings.Repeat("a", 40), TargetRules{MaxLength: 30}, false},
		{"ftp://example.com/", TargetRules{}, false},
	}
	for _, tt := range tests {
		u, err := CheckTarget(tt.raw, tt.rules)
		if (err == nil) != tt.ok {
			t.Errorf("CheckTarget(%q, %+v) = %v, want ok %v", tt.raw, tt.rules, err, tt.ok)
		}
		if err == nil && u.Host == "" {
			t.Errorf("CheckTarget(%q) returned no parsed URL", tt.raw)
		}
	}
}
