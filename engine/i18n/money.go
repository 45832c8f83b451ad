package i18n

import (
	"errors"
	"strconv"
	"strings"

	"golang.org/x/text/currency"
)

// MinorDigits is how many decimal places currency cur has (KRW 0, USD 2), from CLDR;
// an unknown code counts as having none, so that its amounts are never rescaled.
func MinorDigits(cur string) int {
	u, err := currency.ParseISO(cur)
	if err != nil {
		return 0
	}
	scale, _ := currency.Standard.Rounding(u)
	return scale
}

// Money is the one way the bot writes an amount: minor units of cur, shown in the
// currency's own decimals with thousands grouped. Korean writes won the Korean way
// ("5,000원") and other currencies after the number ("12.50 USD"); English puts the
// code first ("KRW 5,000", "USD 12.50").
func Money(lang, cur string, minor int64) string {
	cur = strings.ToUpper(cur)
	n := formatMinor(minor, MinorDigits(cur))
	switch {
	case lang == Korean && cur == "KRW":
		return n + "원"
	case lang == Korean:
		return n + " " + cur
	case cur == "":
		return n
	}
	return cur + " " + n
}

func formatMinor(minor int64, digits int) string {
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = uint64(-minor)
	}
	s := strconv.FormatUint(u, 10)
	var frac string
	if digits > 0 {
		for len(s) <= digits {
			s = "0" + s
		}
		s, frac = s[:len(s)-digits], s[len(s)-digits:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// ErrBadAmount is an amount ParseMoney cannot read.
var ErrBadAmount = errors.New("i18n: not an amount")

// ParseMoney reads an amount as a user writes it in cur's major units ("5000",
// "5,000", "5,000원", "₩5000", "KRW 5000", "12.5" for USD) into minor units. It refuses
// anything else: signs, exponents, more decimals than the currency has, grouping
// commas in the wrong places, numbers too large to hold.
func ParseMoney(cur, s string) (int64, error) {
	cur = strings.ToUpper(cur)
	s = strings.TrimSpace(s)
	up := strings.ToUpper(s)
	switch {
	case cur != "" && strings.HasPrefix(up, cur):
		s = s[len(cur):]
	case cur != "" && strings.HasSuffix(up, cur):
		s = s[:len(s)-len(cur)]
	}
	s = strings.TrimSpace(s)
	for _, sym := range []string{"원", "₩", "$", "€", "£", "¥"} {
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, sym), sym))
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	digits := MinorDigits(cur)
	if whole == "" || (hasDot && (frac == "" || len(frac) > digits)) {
		return 0, ErrBadAmount
	}
	if strings.Contains(whole, ",") {
		groups := strings.Split(whole, ",")
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			return 0, ErrBadAmount
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return 0, ErrBadAmount
			}
		}
		whole = strings.Join(groups, "")
	}
	for len(frac) < digits {
		frac += "0"
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, ErrBadAmount
		}
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, ErrBadAmount
	}
	return n, nil
}
