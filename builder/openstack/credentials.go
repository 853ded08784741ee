package openstack

import (
	"cmp"
	"errors"
	"fmt"
	"os"

	"github.com/gophercloud/gophercloud/v2"
)

// idName is something Keystone knows by id or by name (a user, a project,
// a domain); the id wins when a source gives both.
type idName struct{ id, name string }

func (p idName) set() bool { return p.id != "" || p.name != "" }

// firstSet is the first of ps that says anything: an id and a name are
// never taken from two different sources.
func firstSet(ps ...idName) idName {
	for _, p := range ps {
		if p.set() {
			return p
		}
	}
	return idName{}
}

// credentials are the authentication settings of one source (the
// template, a clouds.yaml entry or the environment), or of all merged.
// The user's domain and the project's domain are kept apart: a Horizon
// openrc names them separately, and they may differ.
type credentials struct {
	authURL, password, token           string
	user, project                      idName
	userDomain, projectDomain          idName
	genericDomain                      idName // OS_DOMAIN_*: both, when no specific one is given
	appCredID, appCredName, appCredKey string
	scope                              *gophercloud.AuthScope // a clouds.yaml trust or system scope
}

// templateCredentials are the template's options. Its domain_id and
// domain_name are the user's domain and the project's.
func (c *AccessConfig) templateCredentials() credentials {
	dom := idName{c.DomainID, c.DomainName}
	return credentials{
		authURL: c.IdentityEndpoint, password: c.Password, token: c.Token,
		user: idName{c.UserID, c.Username}, project: idName{c.TenantID, c.TenantName},
		userDomain: dom, projectDomain: dom,
		appCredID: c.ApplicationCredentialID, appCredName: c.ApplicationCredentialName, appCredKey: c.ApplicationCredentialSecret,
	}
}

// envCredentials are the OS_* variables an openrc file (Horizon's v3 one
// included) or a CI system sets.
func envCredentials() credentials {
	env := func(id, name string) idName { return idName{os.Getenv(id), os.Getenv(name)} }
	return credentials{
		authURL:  firstEnv("OS_AUTH_URL"),
		password: firstEnv("OS_PASSWORD"),
		token:    firstEnv("OS_TOKEN", "OS_AUTH_TOKEN"),
		user:     idName{firstEnv("OS_USER_ID", "OS_USERID"), firstEnv("OS_USERNAME")},
		project:  idName{firstEnv("OS_PROJECT_ID", "OS_TENANT_ID"), firstEnv("OS_PROJECT_NAME", "OS_TENANT_NAME")},
		// OS_DEFAULT_DOMAIN is the last resort of the OpenStack clients.
		userDomain:    firstSet(env("OS_USER_DOMAIN_ID", "OS_USER_DOMAIN_NAME")),
		projectDomain: firstSet(env("OS_PROJECT_DOMAIN_ID", "OS_PROJECT_DOMAIN_NAME")),
		genericDomain: firstSet(env("OS_DOMAIN_ID", "OS_DOMAIN_NAME"), idName{id: os.Getenv("OS_DEFAULT_DOMAIN")}),
		appCredID:     firstEnv("OS_APPLICATION_CREDENTIAL_ID"),
		appCredName:   firstEnv("OS_APPLICATION_CREDENTIAL_NAME"),
		appCredKey:    firstEnv("OS_APPLICATION_CREDENTIAL_SECRET"),
	}
}

// mergeCredentials takes each setting from the template, else the
// clouds.yaml entry, else the environment: what the file leaves blank (a
// password CI injects as OS_PASSWORD) comes from the environment, as with
// the official builder and openstacksdk. The project's domain comes with
// the project when its source names one; otherwise a domain given for
// projects (project_domain_*, OS_PROJECT_DOMAIN_*) beats the template's
// domain, as in the official builder. A domain named nowhere is
// Keystone's "default", as the OpenStack clients assume.
func mergeCredentials(tmpl, file, env credentials) credentials {
	src := env
	switch {
	case tmpl.project.set():
		src = tmpl
	case file.project.set():
		src = file
	}
	str := func(f func(credentials) string) string {
		return cmp.Or(f(tmpl), f(file), f(env))
	}
	def := idName{id: "default"}
	return credentials{
		authURL:       str(func(c credentials) string { return c.authURL }),
		password:      str(func(c credentials) string { return c.password }),
		token:         str(func(c credentials) string { return c.token }),
		appCredID:     str(func(c credentials) string { return c.appCredID }),
		appCredName:   str(func(c credentials) string { return c.appCredName }),
		appCredKey:    str(func(c credentials) string { return c.appCredKey }),
		user:          firstSet(tmpl.user, file.user, env.user),
		project:       firstSet(tmpl.project, file.project, env.project),
		userDomain:    firstSet(tmpl.userDomain, file.userDomain, env.userDomain, env.genericDomain, def),
		projectDomain: firstSet(src.projectDomain, file.projectDomain, env.projectDomain, tmpl.projectDomain, env.genericDomain, def),
		scope:         file.scope,
	}
}

// check says what is missing, naming the template option.
func (cr credentials) check(cloud string) []error {
	var errs []error
	if cr.authURL == "" {
		if cloud != "" {
			return []error{fmt.Errorf("cloud: %q has no auth_url and identity_endpoint is not set", cloud)}
		}
		errs = append(errs, errors.New("identity_endpoint: required (or OS_AUTH_URL, or a clouds.yaml entry named by cloud/OS_CLOUD)"))
	}
	switch {
	case cr.token != "":
	case cr.appCredID != "" || cr.appCredName != "":
		if cr.appCredKey == "" {
			errs = append(errs, errors.New("application_credential_secret: required with application_credential_id or application_credential_name"))
		}
		if cr.appCredID == "" && !cr.user.set() {
			errs = append(errs, errors.New("application_credential_name: needs username or user_id (or use application_credential_id)"))
		}
	default:
		if !cr.user.set() {
			errs = append(errs, errors.New("username: one of username, user_id, token or application_credential_id is required"))
		} else if cr.password == "" {
			errs = append(errs, errors.New("password: required with username or user_id"))
		}
	}
	return errs
}

// authOptions turns merged credentials into one gophercloud request: a
// token wins over an application credential, which wins over a password,
// and only the chosen method's fields are sent (Keystone and gophercloud
// refuse a token next to a user, or a scope next to an application
// credential).
func (cr credentials) authOptions() gophercloud.AuthOptions {
	ao := gophercloud.AuthOptions{IdentityEndpoint: cr.authURL}
	switch {
	case cr.token != "":
		ao.TokenID = cr.token
	case cr.appCredID != "" || cr.appCredName != "":
		ao.ApplicationCredentialID, ao.ApplicationCredentialSecret = cr.appCredID, cr.appCredKey
		if ao.ApplicationCredentialID == "" {
			ao.ApplicationCredentialName = cr.appCredName
			ao.UserID, ao.Username = cr.user.id, cr.user.name
			if ao.UserID == "" {
				ao.DomainID, ao.DomainName = pick(cr.userDomain)
			}
		}
		// Application credentials carry their own scope.
		return finishAuthOpts(ao)
	default:
		ao.UserID, ao.Username, ao.Password = cr.user.id, cr.user.name, cr.password
		if ao.UserID == "" {
			ao.DomainID, ao.DomainName = pick(cr.userDomain)
		}
	}
	switch {
	case cr.project.id != "":
		ao.TenantID = cr.project.id
		ao.Scope = &gophercloud.AuthScope{ProjectID: cr.project.id}
	case cr.project.name != "":
		ao.TenantName = cr.project.name
		ao.Scope = &gophercloud.AuthScope{ProjectName: cr.project.name}
		ao.Scope.DomainID, ao.Scope.DomainName = pick(cr.projectDomain)
	default:
		ao.Scope = cr.scope
	}
	return finishAuthOpts(ao)
}

// pick is the id, else the name: gophercloud takes exactly one.
func pick(p idName) (id, name string) {
	if p.id != "" {
		return p.id, ""
	}
	return "", p.name
}

// finishAuthOpts applies what every credential type shares: long builds
// outlive tokens, so gophercloud may get a new one on a 401. A given token
// cannot be renewed, so there is nothing to re-run.
func finishAuthOpts(ao gophercloud.AuthOptions) gophercloud.AuthOptions {
	ao.AllowReauth = ao.TokenID == ""
	return ao
}
