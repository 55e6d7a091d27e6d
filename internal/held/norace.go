//go:build !race

package held

func raceDisable() {}
func raceEnable()  {}
