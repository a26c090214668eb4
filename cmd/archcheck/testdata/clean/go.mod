module example.com/app

go 1.26

require github.com/gin-gonic/gin v0.0.0

replace github.com/gin-gonic/gin => ./fakegin
