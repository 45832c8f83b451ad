package components

import "testing"

func TestParseMoney(t *testing.T) {
	tests := []struct {
		in, currency string
		want         int64
		err          bool
	}{
		{"5000", "KRW", 5000, false},
		{"5,000", "KRW", 5000, false},
		{"5,000 KRW", "KRW", 5000, false},
		{"12.5", "USD", 1250, false},
		{"12.50", "usd", 1250, false},
		{"12", "USD", 1200, false},
		{".5", "USD", 50, false},
		{"1.234", "KWD", 1234, false},
		{"12.5", "KRW", 0, true},
		{"12.505", "USD", 0, true},
		{"-3", "KRW", 0, true},
		{"1e3", "KRW", 0, true},
		{"", "KRW", 0, true},
		{"99999999999999999999", "KRW", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseMoney(tt.in, tt.currency)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseMoney(%q, %s) = %d, %v; want %d, error %v", tt.in, tt.currency, got, err, tt.want, tt.err)
		}
		if err == nil && Money(got, tt.currency) == "" {
			t.Errorf("Money(%d) empty", got)
		}
	}
}
