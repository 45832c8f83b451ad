package store

import (
	"strconv"
)

func parseIntSuffix(key []byte, prefix string) (int64, error) {
	if len(key) < len(prefix) {
		return 0, errInvalidKey
	}
	return strconv.ParseInt(string(key[len(prefix):]), 10, 64)
}
