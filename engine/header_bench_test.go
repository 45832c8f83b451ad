package engine

import "testing"

// Updates as Telegram sends them (its JSON escapes "/" as "\/"), for the decoder's
// benchmarks and tests.
var (
	benchHelpUpdate = []byte(`{"update_id":734918205,"message":{"message_id":18342,"from":{"id":5123456789,"is_bot":false,"first_name":"Ann","last_name":"Lee","username":"annlee","language_code":"en"},"chat":{"id":5123456789,"first_name":"Ann","last_name":"Lee","username":"annlee","type":"private"},"date":1764560000,"text":"\/help","entities":[{"offset":0,"length":5,"type":"bot_command"}]}}`)

	benchCallbackUpdate = []byte(`{"update_id":734918206,"callback_query":{"id":"2200473541856251627","from":{"id":5123456789,"is_bot":false,"first_name":"Ann","last_name":"Lee","username":"annlee","language_code":"en"},"message":{"message_id":18343,"from":{"id":7012345678,"is_bot":true,"first_name":"Hangar","username":"hangar_bot"},"chat":{"id":5123456789,"first_name":"Ann","last_name":"Lee","username":"annlee","type":"private"},"date":1764560001,"text":"Choose a plan","reply_markup":{"inline_keyboard":[[{"text":"Small \u2014 2 GB","callback_data":"oc:0123456789abcdef"}],[{"text":"Large \u2014 8 GB","callback_data":"oc:fedcba9876543210"}]]}},"chat_instance":"-3761024789514620011","data":"oc:0123456789abcdef"}}`)
)

func BenchmarkParseUpdateHeader(b *testing.B) {
	for _, bc := range []struct {
		name string
		raw  []byte
	}{{"help", benchHelpUpdate}, {"callback", benchCallbackUpdate}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseUpdateHeader(bc.raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
