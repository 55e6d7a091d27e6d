//go:build !race

package held

func raceOff() {}
func raceOn()  {}
