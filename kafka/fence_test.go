package kafka

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestStageErrorFenced pins which failures wrap ErrFenced: a refused
// producer epoch (from the transaction coordinator or a partition leader)
// under ExactlyOnce, named with the stage and its transactional ID; not
// another error, and not a stage without transactions.
func TestStageErrorFenced(t *testing.T) {
	txn := &txnStage{id: "eos-1"}
	for _, tc := range []struct {
		name   string
		txn    *txnStage
		err    error
		fenced bool
	}{
		{"producer fenced", txn, fmt.Errorf("end transaction: %w", kerr.ProducerFenced), true},
		{"invalid producer epoch", txn, fmt.Errorf("produce to %q: %w", "partials", kerr.InvalidProducerEpoch), true},
		{"other error", txn, kerr.InvalidTxnState, false},
		{"at least once", nil, kerr.InvalidProducerEpoch, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := stageError("worker", tc.txn, tc.err)
			require.ErrorIs(t, err, tc.err)
			if !tc.fenced {
				require.NotErrorIs(t, err, ErrFenced)
				require.Equal(t, "kafka: worker: "+tc.err.Error(), err.Error())
				return
			}
			require.ErrorIs(t, err, ErrFenced)
			require.Equal(t, `kafka: fenced by a newer stage with the same transactional ID: worker (transactional ID "eos-1"): `+tc.err.Error(), err.Error())
		})
	}
}
