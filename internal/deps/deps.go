package deps

import (
	_ "github.com/charmbracelet/bubbles/help"
	_ "github.com/charmbracelet/bubbles/key"
	_ "github.com/charmbracelet/bubbles/spinner"
	_ "github.com/charmbracelet/bubbles/table"
	_ "github.com/charmbracelet/bubbles/textinput"
	_ "github.com/charmbracelet/bubbles/viewport"
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/charmbracelet/ssh"
	_ "github.com/charmbracelet/wish"
	_ "github.com/charmbracelet/wish/activeterm"
	_ "github.com/charmbracelet/wish/bubbletea"
	_ "github.com/charmbracelet/wish/logging"
	_ "github.com/charmbracelet/x/exp/teatest"
	_ "github.com/linode/linodego"
	_ "github.com/vultr/govultr/v3"
	_ "golang.org/x/crypto/ssh"
	_ "golang.org/x/oauth2"
	_ "golang.org/x/sync/errgroup"
	_ "golang.org/x/time/rate"
)
