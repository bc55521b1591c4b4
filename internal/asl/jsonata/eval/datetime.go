package eval

func defineDateTime() {}
