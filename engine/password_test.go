package engine

import (
	"strings"
	"testing"
)

// Every character of a root password is drawn uniformly from the alphabet: a plain
// byte modulo its 57 characters would make the first 28 a quarter more likely, which
// this many draws tells apart (each count within about 4.5 standard deviations).
func TestRandomPasswordIsUniformOverTheAlphabet(t *testing.T) {
	const perChar = 2000
	n := len(passwordAlphabet) * perChar / 20
	counts := map[rune]int{}
	for range n {
		pw, err := randomPassword()
		if err != nil {
			t.Fatal(err)
		}
		if len(pw) != 20 {
			t.Fatalf("password %q has %d characters, want 20", pw, len(pw))
		}
		for _, r := range pw {
			if !strings.ContainsRune(passwordAlphabet, r) {
				t.Fatalf("password %q has %q, outside the alphabet", pw, r)
			}
			counts[r]++
		}
	}
	for _, r := range passwordAlphabet {
		if c := counts[r]; c < perChar-200 || c > perChar+200 {
			t.Errorf("%q drawn %d times in %d characters, want about %d", r, c, n*20, perChar)
		}
	}
}
