package engine

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"strconv"
)

const passwordAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"

// NewPasswordDeriver returns a function that derives an order's root password from a
// secret key: HMAC-SHA256(key, order id), spelled in an unambiguous alphabet. The same
// order always gets the same password, so a retried or recovered order, and the
// outbox sending the "ready" message, can recompute it while nothing ever stores it.
// A nil key means a random one for this process only.
func NewPasswordDeriver(key []byte) func(orderID int64) string {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("engine: no randomness for the password key: " + err.Error())
		}
	}
	return func(orderID int64) string {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte("hangar root password v1:" + strconv.FormatInt(orderID, 10)))
		n := new(big.Int).SetBytes(mac.Sum(nil))
		base := big.NewInt(int64(len(passwordAlphabet)))
		out := make([]byte, 20)
		mod := new(big.Int)
		for i := range out {
			n.DivMod(n, base, mod)
			out[i] = passwordAlphabet[mod.Int64()]
		}
		return string(out)
	}
}
