package dotimport

import (
	. "sync"
)

var wg WaitGroup
