package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/kafka"
)

// saslPasswordEnv names the environment variable holding the SASL
// password: a password on the command line is visible to every user of
// the machine (ps), so there is no flag for it.
const saslPasswordEnv = "SKEWER_KAFKA_SASL_PASSWORD"

// securityFlags are the kafka subcommand's flags for a secured cluster
// (kafka.Security).
type securityFlags struct {
	tls       bool
	mechanism string
	user      string
}

func (s *securityFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.tls, "tls", false, "connect to -brokers over TLS (the system's roots, TLS 1.2 at least)")
	fs.StringVar(&s.mechanism, "sasl-mechanism", "", fmt.Sprintf("SASL `MECHANISM` with -brokers: one of %s (empty: none); the password is read from $%s", strings.Join(kafka.SASLMechanisms, ", "), saslPasswordEnv))
	fs.StringVar(&s.user, "sasl-user", "", "SASL `USER` with -sasl-mechanism")
}

// security checks the flags (set: those given; they need -brokers) and
// returns the kafka.Security they make, the password from the
// environment.
// clientOpts is security and the client options of its Security.
func (s *securityFlags) clientOpts(set map[string]bool, brokers string) (kafka.Security, []kgo.Opt, error) {
	sec, err := s.security(set, brokers)
	if err != nil {
		return sec, nil, err
	}
	opts, err := sec.ClientOpts()
	return sec, opts, err
}

func (s *securityFlags) security(set map[string]bool, brokers string) (kafka.Security, error) {
	if brokers == "" {
		for _, f := range []string{"tls", "sasl-mechanism", "sasl-user"} {
			if set[f] {
				return kafka.Security{}, unused("-"+f, "without -brokers (the in-process cluster is plaintext)")
			}
		}
		return kafka.Security{}, nil
	}
	sec := kafka.Security{TLS: s.tls, Mechanism: s.mechanism, User: s.user, Password: os.Getenv(saslPasswordEnv)}
	switch {
	case s.mechanism == "" && s.user != "":
		return sec, unused("-sasl-user", "without -sasl-mechanism")
	case s.mechanism == "":
		sec.Password = ""
	case !slices.Contains(kafka.SASLMechanisms, s.mechanism):
		return sec, fmt.Errorf("%w: -sasl-mechanism = %q, want one of %s", bench.ErrInvalidParameter, s.mechanism, strings.Join(kafka.SASLMechanisms, ", "))
	case s.user == "":
		return sec, fmt.Errorf("%w: -sasl-user = \"\", want a user name with -sasl-mechanism %s", bench.ErrInvalidParameter, s.mechanism)
	case sec.Password == "":
		return sec, fmt.Errorf("%w: $%s is empty, want the SASL password of -sasl-user %q", bench.ErrInvalidParameter, saslPasswordEnv, s.user)
	}
	return sec, nil
}
