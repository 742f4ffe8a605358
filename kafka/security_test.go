package kafka

import (
	"crypto/tls"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
)

// TestSecurityClientOpts pins the options each Security builds, read back
// from a client built with them (no connection is made).
func TestSecurityClientOpts(t *testing.T) {
	for _, c := range []struct {
		s    Security
		tls  bool
		mech string
	}{
		{Security{}, false, ""},
		{Security{TLS: true}, true, ""},
		{Security{Mechanism: "PLAIN", User: "u", Password: "p"}, false, "PLAIN"},
		{Security{TLS: true, Mechanism: "SCRAM-SHA-256", User: "u", Password: "p"}, true, "SCRAM-SHA-256"},
		{Security{Mechanism: "SCRAM-SHA-512", User: "u", Password: "p"}, false, "SCRAM-SHA-512"},
	} {
		t.Run(c.mech, func(t *testing.T) {
			opts, err := c.s.ClientOpts()
			require.NoError(t, err)
			cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers("127.0.0.1:1"))...)
			require.NoError(t, err)
			defer cl.Close()
			tc, _ := cl.OptValue(kgo.DialTLSConfig).(*tls.Config)
			require.Equal(t, c.tls, tc != nil)
			if c.tls {
				require.Equal(t, uint16(tls.VersionTLS12), tc.MinVersion)
			}
			ms, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
			if c.mech == "" {
				require.Empty(t, ms)
				return
			}
			require.Len(t, ms, 1)
			require.Equal(t, c.mech, ms[0].Name())
		})
	}
}

func TestSecurityBadInput(t *testing.T) {
	for want, s := range map[string]Security{
		"SASL mechanism = \"GSSAPI\"": {Mechanism: "GSSAPI", User: "u", Password: "p"},
		"SASL user":                   {Mechanism: "PLAIN", Password: "p"},
		"SASL password":               {Mechanism: "SCRAM-SHA-256", User: "u"},
		"SASL mechanism = \"\"":       {User: "u"},
	} {
		_, err := s.ClientOpts()
		require.ErrorIs(t, err, ErrInvalidParameter, want)
		require.ErrorContains(t, err, want)
	}
}
