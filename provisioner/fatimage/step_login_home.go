package fatimage

import "context"

// stepLoginHome moves the login user's home out of /home (login_home).
func stepLoginHome(ctx context.Context, s *state) error {
	home := s.cfg.LoginHome
	if home == "" {
		home = "/var/lib/" + s.loginUser
	}
	s.say("login user's home")
	_, err := s.runScript(ctx, newScript("login-home").set("LOGIN_HOME", home))
	return err
}
