package components

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// minorDigits lists the ISO 4217 currencies whose minor unit is not a hundredth:
// amounts travel as integers of the minor unit, so KRW 5000 is ₩5,000 and USD 5000 is
// $50.00. Any other code has two digits.
var minorDigits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
	"PYG": 0, "RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// MinorDigits is how many digits of currency's amounts are below its major unit.
func MinorDigits(currency string) int {
	if d, ok := minorDigits[strings.ToUpper(currency)]; ok {
		return d
	}
	return 2
}

// Money is the console's one way to show an amount: minor units of the catalogue's
// currency, digits grouped by thousands, the minor part only where the currency has
// one, and the code after ("5,000 KRW", "12.50 USD"). Without a currency (the
// catalogue not read yet) it shows the bare grouped integer rather than guess a
// minor unit.
func Money(minor int64, currency string) string {
	digits := 0
	if currency != "" {
		digits = MinorDigits(currency)
	}
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = -u
	}
	s := strconv.FormatUint(u, 10)
	if digits > 0 {
		if len(s) <= digits {
			s = strings.Repeat("0", digits-len(s)+1) + s
		}
		s = group(s[:len(s)-digits]) + "." + s[len(s)-digits:]
	} else {
		s = group(s)
	}
	if neg {
		s = "-" + s
	}
	if currency != "" {
		s += " " + strings.ToUpper(currency)
	}
	return s
}

// group puts a comma between every three digits from the right.
func group(s string) string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ParseMoney reads an amount typed in the currency's major unit ("5,000", "12.50")
// into minor units, the inverse of Money. More decimals than the currency has, a sign
// or anything but digits, commas and one point is an error, never rounded.
func ParseMoney(s, currency string) (int64, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.ToUpper(s)), strings.ToUpper(currency)))
	s = strings.ReplaceAll(s, ",", "")
	digits := MinorDigits(currency)
	whole, frac, hasPoint := strings.Cut(s, ".")
	switch {
	case whole == "" && frac == "":
		return 0, errors.New("type an amount")
	case hasPoint && digits == 0:
		return 0, fmt.Errorf("%s has no minor unit: type a whole number", strings.ToUpper(currency))
	case len(frac) > digits:
		return 0, fmt.Errorf("%s has %d decimals", strings.ToUpper(currency), digits)
	}
	frac += strings.Repeat("0", digits-len(frac))
	n, err := strconv.ParseUint(whole+frac, 10, 63)
	if err != nil {
		return 0, fmt.Errorf("%q is not an amount", s)
	}
	return int64(n), nil
}
