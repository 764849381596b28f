//go:build !linux

package engine

import "errors"

func setNice(n int) error {
	if n == 0 {
		return nil
	}
	return errors.New("per-thread nice values are Linux's")
}
