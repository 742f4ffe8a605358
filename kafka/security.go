package kafka

import (
	"crypto/tls"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASLMechanisms are the names Security takes: SASL/PLAIN and SCRAM over
// SHA-256 or SHA-512, as Kafka's brokers name them.
var SASLMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// Security is how clients authenticate to a secured cluster: TLS (the
// system's roots, TLS 1.2 at least) and SASL with a mechanism of
// SASLMechanisms ("" for none). The zero value is a plaintext cluster.
type Security struct {
	TLS       bool
	Mechanism string
	User      string
	// Password is the SASL password; take it from the environment or a
	// secret store, never a command line (other users see those).
	Password string
}

// ClientOpts returns the franz-go options of s, for Config.ClientOpts,
// SourceConfig.ClientOpts and SinkConfig.ClientOpts. An unknown
// mechanism, or a mechanism without a user or a password (or a user
// without a mechanism), fails with ErrInvalidParameter naming the
// parameter.
func (s Security) ClientOpts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.TLS {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	if s.Mechanism == "" {
		if s.User != "" || s.Password != "" {
			return nil, invalidParam("SASL mechanism", `""`, fmt.Sprintf("one of %v with a user or a password", SASLMechanisms))
		}
		return opts, nil
	}
	switch {
	case s.User == "":
		return nil, invalidParam("SASL user", `""`, "a user name with mechanism "+s.Mechanism)
	case s.Password == "":
		return nil, invalidParam("SASL password", `""`, "a password with mechanism "+s.Mechanism)
	}
	switch s.Mechanism {
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: s.User, Pass: s.Password}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism()))
	default:
		return nil, invalidParam("SASL mechanism", fmt.Sprintf("%q", s.Mechanism), fmt.Sprintf("one of %v", SASLMechanisms))
	}
	return opts, nil
}
