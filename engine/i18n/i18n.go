package i18n

import (
	"embed"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

// Languages the bot speaks. A user whose client sends none of these gets the
// operator's default.
const (
	Korean  = "ko"
	English = "en"
)

// Supported lists the languages in the order /language shows them.
var Supported = []string{Korean, English}

//go:embed locales/*.toml
var locales embed.FS

// Catalog is the bundle of message files and the operator's default language.
type Catalog struct {
	bundle   *goi18n.Bundle
	def      string
	currency string
	printers map[string]Printer
}

// New loads the embedded catalogues. def is the language for users whose client asks
// for one the bot does not speak; currency is the catalogue's (ISO 4217) for Money.
func New(def, currency string) (*Catalog, error) {
	def = strings.ToLower(strings.TrimSpace(def))
	if def == "" {
		def = Korean
	}
	if !IsSupported(def) {
		return nil, fmt.Errorf("i18n: language %q is not one the bot speaks (%s)", def, strings.Join(Supported, ", "))
	}
	b := goi18n.NewBundle(language.Korean)
	b.RegisterUnmarshalFunc("toml", toml.Unmarshal)
	texts := map[string]map[string]text{}
	for _, lang := range Supported {
		name := path.Join("locales", lang+".toml")
		raw, err := locales.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("i18n: %w", err)
		}
		mf, err := b.ParseMessageFileBytes(raw, lang+".toml")
		if err != nil {
			return nil, fmt.Errorf("i18n: %s: %w", name, err)
		}
		texts[lang] = compileTexts(mf.Messages)
	}
	c := &Catalog{bundle: b, def: def, currency: strings.ToUpper(currency), printers: map[string]Printer{}}
	for _, lang := range Supported {
		// Each language's localizer falls back to the other only if a message were
		// missing, which TestCataloguesHaveTheSameMessages rules out.
		c.printers[lang] = Printer{lang: lang, currency: c.currency, loc: goi18n.NewLocalizer(b, lang, def), texts: texts[lang]}
	}
	return c, nil
}

// MustNew is New for the built-in defaults, which cannot fail to load.
func MustNew(def, currency string) *Catalog {
	c, err := New(def, currency)
	if err != nil {
		panic(err)
	}
	return c
}

// IsSupported reports whether the bot speaks lang (a bare code: "ko", "en").
func IsSupported(lang string) bool { return slices.Contains(Supported, lang) }

// Default is the operator's language.
func (c *Catalog) Default() string { return c.def }

// Currency is the catalogue currency Money formats.
func (c *Catalog) Currency() string { return c.currency }

// Pick chooses a user's language: the one they chose with /language, else their
// client's language_code when the bot speaks it ("ko-KR" counts as "ko"), else the
// operator's default.
func (c *Catalog) Pick(chosen, client string) string {
	if IsSupported(chosen) {
		return chosen
	}
	if base := Base(client); IsSupported(base) {
		return base
	}
	return c.def
}

// Base is the bare language of a BCP 47 tag ("ko-KR" → "ko"), or "" if it has none.
func Base(tag string) string {
	if strings.TrimSpace(tag) == "" {
		return ""
	}
	t, err := language.Parse(tag)
	if err != nil {
		return ""
	}
	b, conf := t.Base()
	if conf == language.No {
		return ""
	}
	return b.String()
}

// For returns the printer for lang, or the default language's for one the bot does
// not speak.
func (c *Catalog) For(lang string) Printer {
	if p, ok := c.printers[lang]; ok {
		return p
	}
	return c.printers[c.def]
}

// MessageIDs lists the ids of one language's catalogue, sorted.
func MessageIDs(lang string) ([]string, error) {
	raw, err := locales.ReadFile(path.Join("locales", lang+".toml"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := toml.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// Printer renders messages and money in one language.
type Printer struct {
	lang     string
	currency string
	loc      *goi18n.Localizer
	texts    map[string]text
}

// Lang is the printer's language.
func (p Printer) Lang() string { return p.lang }

// T renders message id with its template fields given as name, value pairs. A
// message that cannot be rendered (a bug: the catalogue test checks every id) comes
// out as its id rather than failing the reply, and is logged.
func (p Printer) T(id string, kv ...any) string {
	if t, ok := p.texts[id]; ok {
		if s, ok := t.render(kv); ok {
			return s
		}
	}
	return p.localize(id, kv)
}

// localize renders a message through go-i18n: the texts that are not compiled, and
// values render leaves to text/template's printing.
func (p Printer) localize(id string, kv []any) string {
	if p.loc == nil {
		return id
	}
	var data map[string]any
	if len(kv) > 0 {
		data = make(map[string]any, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			name, _ := kv[i].(string)
			data[name] = kv[i+1]
		}
	}
	s, err := p.loc.Localize(&goi18n.LocalizeConfig{MessageID: id, TemplateData: data})
	if err != nil {
		slog.Default().Error("i18n: message cannot be rendered", "id", id, "lang", p.lang, "err", err)
		return id
	}
	return s
}

// Money formats an amount of the catalogue currency for the printer's language.
func (p Printer) Money(minor int64) string { return Money(p.lang, p.currency, minor) }
