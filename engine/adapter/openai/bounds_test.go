package openai

import (
	"os"
	"strings"
	"testing"
)

// TestLoadTemplateBounded: --endpoint /dev/zero (a file that never ends)
// is refused after MaxTemplateBytes, not read without limit.
func TestLoadTemplateBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip(err)
	}
	if _, err := LoadTemplate("/dev/zero"); err == nil || !strings.Contains(err.Error(), "more than a template holds") {
		t.Errorf("LoadTemplate(/dev/zero) = %v; want it refused as too large", err)
	}
}
