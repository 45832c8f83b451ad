package i18n_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/engine/i18n"
)

// Every message the code can ask for must exist in both languages, or one language's
// users would get the other's text (or an id).
func TestCataloguesHaveTheSameMessages(t *testing.T) {
	ko, err := i18n.MessageIDs(i18n.Korean)
	if err != nil {
		t.Fatal(err)
	}
	en, err := i18n.MessageIDs(i18n.English)
	if err != nil {
		t.Fatal(err)
	}
	if len(ko) < 50 {
		t.Fatalf("ko.toml has only %d messages", len(ko))
	}
	for _, id := range ko {
		if !slices.Contains(en, id) {
			t.Errorf("%s is in ko.toml but not in en.toml", id)
		}
	}
	for _, id := range en {
		if !slices.Contains(ko, id) {
			t.Errorf("%s is in en.toml but not in ko.toml", id)
		}
	}
	c := i18n.MustNew(i18n.Korean, "KRW")
	for _, id := range en {
		for _, lang := range i18n.Supported {
			if got := c.For(lang).T(id); got == id || got == "" {
				t.Errorf("%s does not render in %s", id, lang)
			}
		}
	}
}

func TestPick(t *testing.T) {
	ko := i18n.MustNew(i18n.Korean, "KRW")
	en := i18n.MustNew(i18n.English, "KRW")
	for _, tc := range []struct {
		c              *i18n.Catalog
		chosen, client string
		want           string
	}{
		{ko, "", "ko", "ko"},
		{ko, "", "en", "en"},
		{ko, "", "en-GB", "en"},
		{ko, "", "ko-KR", "ko"},
		{ko, "", "de", "ko"},
		{en, "", "de", "en"},
		{en, "", "", "en"},
		{ko, "en", "ko", "en"}, // a choice made with /language wins over the client
		{en, "ko", "en", "ko"},
		{ko, "fr", "en", "en"}, // a stored choice the bot no longer speaks is ignored
		{ko, "", "not a tag!", "ko"},
	} {
		if got := tc.c.Pick(tc.chosen, tc.client); got != tc.want {
			t.Errorf("default %s Pick(%q, %q) = %q, want %q", tc.c.Default(), tc.chosen, tc.client, got, tc.want)
		}
	}
	if _, err := i18n.New("de", "KRW"); err == nil {
		t.Error("New accepted a default language the bot does not speak")
	}
}

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		lang, cur string
		minor     int64
		want      string
	}{
		{"ko", "KRW", 5000, "5,000원"},
		{"ko", "KRW", 0, "0원"},
		{"ko", "KRW", 1234567, "1,234,567원"},
		{"en", "KRW", 5000, "KRW 5,000"},
		{"en", "USD", 1250, "USD 12.50"},
		{"en", "USD", 5, "USD 0.05"},
		{"en", "USD", 123456789, "USD 1,234,567.89"},
		{"ko", "USD", 1250, "12.50 USD"},
		{"en", "JPY", 500, "JPY 500"},
		{"en", "KRW", -5000, "KRW -5,000"},
		{"en", "BHD", 1500, "BHD 1.500"},
	} {
		if got := i18n.Money(tc.lang, tc.cur, tc.minor); got != tc.want {
			t.Errorf("Money(%s, %s, %d) = %q, want %q", tc.lang, tc.cur, tc.minor, got, tc.want)
		}
	}
}

func TestParseMoney(t *testing.T) {
	for _, tc := range []struct {
		cur, in string
		want    int64
		bad     bool
	}{
		{"KRW", "5000", 5000, false},
		{"KRW", "5,000", 5000, false},
		{"KRW", "5,000원", 5000, false},
		{"KRW", "₩5000", 5000, false},
		{"KRW", "KRW 5000", 5000, false},
		{"KRW", "5000 krw", 5000, false},
		{"USD", "12.5", 1250, false},
		{"USD", "12.50", 1250, false},
		{"USD", "$12", 1200, false},
		{"USD", "1,234.56", 123456, false},
		{"KRW", "5000.5", 0, true}, // won has no minor unit
		{"USD", "12.505", 0, true},
		{"KRW", "-5000", 0, true},
		{"KRW", "+5000", 0, true},
		{"KRW", "5e3", 0, true},
		{"KRW", "50,00", 0, true},
		{"KRW", ",500", 0, true},
		{"KRW", "", 0, true},
		{"KRW", "abc", 0, true},
		{"KRW", "99999999999999999999", 0, true},
		{"USD", "12.", 0, true},
		{"KRW", "٥٠٠٠", 0, true}, // digits of another script
	} {
		got, err := i18n.ParseMoney(tc.cur, tc.in)
		switch {
		case tc.bad && !errors.Is(err, i18n.ErrBadAmount):
			t.Errorf("ParseMoney(%s, %q) = %d, %v; want ErrBadAmount", tc.cur, tc.in, got, err)
		case !tc.bad && (err != nil || got != tc.want):
			t.Errorf("ParseMoney(%s, %q) = %d, %v; want %d", tc.cur, tc.in, got, err, tc.want)
		}
	}
}

func TestTemplatesFillIn(t *testing.T) {
	c := i18n.MustNew(i18n.Korean, "KRW")
	ko := c.For("ko").T("CancelDone", "ID", 7, "Amount", c.For("ko").Money(5000))
	if !strings.Contains(ko, "#7") || !strings.Contains(ko, "5,000원") || !strings.Contains(ko, "취소") {
		t.Errorf("ko CancelDone = %q", ko)
	}
	en := c.For("en").T("CancelDone", "ID", 7, "Amount", c.For("en").Money(5000))
	if en != "Order #7 cancelled; KRW 5,000 released to your balance." {
		t.Errorf("en CancelDone = %q", en)
	}
	if got := c.For("xx").Lang(); got != "ko" {
		t.Errorf("For(xx) = %s, want the default", got)
	}
}
