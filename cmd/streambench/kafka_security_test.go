package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/kafka"
)

// TestKafkaSecurityFlags pins what the security flags make: the password
// comes from $SKEWER_KAFKA_SASL_PASSWORD, and an empty one is refused.
func TestKafkaSecurityFlags(t *testing.T) {
	t.Setenv(saslPasswordEnv, "s3cret")
	f := securityFlags{tls: true, mechanism: "SCRAM-SHA-512", user: "alice"}
	sec, err := f.security(map[string]bool{"tls": true, "sasl-mechanism": true, "sasl-user": true}, "b:9093")
	require.NoError(t, err)
	require.Equal(t, kafka.Security{TLS: true, Mechanism: "SCRAM-SHA-512", User: "alice", Password: "s3cret"}, sec)
	opts, err := sec.ClientOpts()
	require.NoError(t, err)
	require.Len(t, opts, 2) // TLS, SASL

	sec, err = (&securityFlags{}).security(nil, "b:9092")
	require.NoError(t, err)
	require.Equal(t, kafka.Security{}, sec, "no mechanism: the password is not read")

	t.Setenv(saslPasswordEnv, "")
	_, err = (&securityFlags{mechanism: "PLAIN", user: "alice"}).security(map[string]bool{"sasl-mechanism": true}, "b:9092")
	require.ErrorContains(t, err, "$SKEWER_KAFKA_SASL_PASSWORD is empty")
}
