// Package styles owns every colour and border of the console, built on one lipgloss
// renderer so that each SSH session renders for its own terminal.
package styles
