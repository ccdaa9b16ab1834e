package hub

import (
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/crypto"
)

// LoadKeyring finds the key-encryption key (docs/operating.md): the environment
// variable named by STREAMING_HUB_KEK_REF, or STREAMING_HUB_DEV_KEK in local
// development. Without one the hub must not start: it could neither store
// new secrets nor read the ones it has.
func LoadKeyring(cfg *config.Config, lookupEnv func(string) (string, bool)) (*crypto.Keyring, error) {
	kek := cfg.KEK
	switch {
	case kek.Ref != "":
		value, ok := lookupEnv(kek.Ref)
		if !ok || value == "" {
			return nil, config.Setupf("STREAMING_HUB_KEK_REF names %s, which is not set: export %s=$(openssl rand -base64 32)", kek.Ref, kek.Ref)
		}
		ring, err := crypto.ParseKeyring(value)
		if err != nil {
			return nil, config.Setupf("invalid key-encryption key in %s (named by STREAMING_HUB_KEK_REF): %w", kek.Ref, err)
		}
		return ring, nil
	case kek.DevKEK != "":
		if cfg.Environment != config.EnvironmentLocal {
			return nil, config.Setupf("STREAMING_HUB_DEV_KEK is only accepted with STREAMING_HUB_ENV=local (now %s): set STREAMING_HUB_KEK_REF instead", cfg.Environment)
		}
		ring, err := crypto.ParseKeyring(kek.DevKEK)
		if err != nil {
			return nil, config.Setupf("invalid STREAMING_HUB_DEV_KEK: %w", err)
		}
		return ring, nil
	}
	return nil, config.Setupf("no key-encryption key: set STREAMING_HUB_KEK_REF to the name of an environment variable holding one (e.g. STREAMING_HUB_KEK_REF=HUB_KEK HUB_KEK=$(openssl rand -base64 32)), or STREAMING_HUB_DEV_KEK with STREAMING_HUB_ENV=local")
}
