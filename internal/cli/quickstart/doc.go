// Package quickstart holds no code: its test runs the README's quickstart,
// line by line, against a real `hubctl dev`, so the first thing a new user
// reads cannot fall behind the commands it shows.
package quickstart
