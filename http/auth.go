package http

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// secretEqual compares in constant time. Hashing first makes the comparison
// independent of the lengths too.
func secretEqual(given, want string) bool {
	a := sha256.Sum256([]byte(given))
	b := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(c *fiber.Ctx) (string, bool) {
	h := c.Get(fiber.HeaderAuthorization)
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// requireBearer admits requests carrying want as their bearer token: 401 without a
// bearer, 403 with a wrong one, unset when want is empty (the feature is switched off
// until configured).
func requireBearer(want string, unset *apiError) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if want == "" {
			return unset
		}
		token, ok := bearer(c)
		if !ok {
			return errUnauthorized
		}
		if !secretEqual(token, want) {
			return errForbidden
		}
		return c.Next()
	}
}
