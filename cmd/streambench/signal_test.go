//go:build unix

package main

import (
	"context"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSignalContext(t *testing.T) {
	// A SIGINT to the process cancels the context with the signal as its
	// cause; the exit status is then 128 + 2. (The first signal restores
	// the default handling, so the test sends only one.)
	ctx, stop := signalContext()
	defer stop()
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGINT))
	<-ctx.Done()
	require.Equal(t, interrupt{syscall.SIGINT}, context.Cause(ctx))
	require.Equal(t, 130, interruptStatus(ctx))
}
