package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// leaveWorkspace turns the go command's workspace mode off for this run
// (GOWORK=off, in this process's environment, which every go command
// it starts inherits), if a go.work file is in force: go's -modfile,
// which carries syncwatch's requirement, cannot be used in workspace
// mode. The module is then built with its own go.mod, which must require,
// or replace, every module the workspace supplied. It returns the note to
// print, "" if there is no workspace.
func leaveWorkspace() (string, error) {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return "", fmt.Errorf("syncwatch: go env GOWORK: %w", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return "", nil
	}
	if err := os.Setenv("GOWORK", "off"); err != nil {
		return "", err
	}
	return fmt.Sprintf("syncwatch: %s is left out (GOWORK=off): the module is built with its own go.mod, which must require or replace every module the workspace supplies", work), nil
}
