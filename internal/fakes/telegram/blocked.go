package telegramfake

import "net/http"

// Block makes every sendMessage to the given chats answer 403 "bot was blocked by the
// user", as Telegram does once a user blocks the bot; nothing is recorded for them.
func (s *Server) Block(chats ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.blocked == nil {
		s.blocked = map[int64]bool{}
	}
	for _, c := range chats {
		s.blocked[c] = true
	}
}

func (s *Server) answerBlocked(w http.ResponseWriter, chat int64) bool {
	s.mu.Lock()
	blocked := s.blocked[chat]
	s.mu.Unlock()
	if blocked {
		writeJSON(w, http.StatusForbidden, apiResponse{ErrorCode: 403, Description: "Forbidden: bot was blocked by the user"})
	}
	return blocked
}
