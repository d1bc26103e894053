package azure

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/storeurl"
)

func init() {
	// None can fail: the schemes and host are valid and not built in.
	for _, scheme := range []string{"az", "abfs", "abfss"} {
		_ = storeurl.Register(scheme, openURL)
	}
	_ = storeurl.RegisterHost("blob.core.windows.net", openURL)
}

// ErrURL reports a location ParseURL cannot read.
var ErrURL = fmt.Errorf("%w: not an Azure Blob location", storeurl.ErrInvalidURL)

// Location is a parsed Azure Blob location.
type Location struct {
	// Account is the storage account, "" when the URL does not name it
	// (az://container/prefix: Open then takes it from the environment).
	Account   string
	Container string
	Prefix    string
}

// ParseURL reads the spellings of an Azure Blob location:
//
//	az://container/prefix                                  account from the environment
//	abfs://container/prefix, abfss://container/prefix      the same
//	az://container@account.blob.core.windows.net/prefix    account named
//	abfs[s]://container@account.dfs.core.windows.net/prefix
//	https://account.blob.core.windows.net/container/prefix
//
// (an ADLS Gen2 account's dfs endpoint serves the same data as its blob
// endpoint, which the store uses).
func ParseURL(location string) (Location, error) {
	u, err := url.Parse(location)
	if err != nil {
		return Location{}, fmt.Errorf("%w: %q: %w", ErrURL, location, err)
	}
	var loc Location
	switch strings.ToLower(u.Scheme) {
	case "az", "abfs", "abfss":
		loc.Prefix = strings.TrimPrefix(u.Path, "/")
		if u.User != nil {
			loc.Container = u.User.Username()
			host := strings.ToLower(u.Hostname())
			acct, rest, _ := strings.Cut(host, ".")
			if rest != "blob.core.windows.net" && rest != "dfs.core.windows.net" {
				return Location{}, fmt.Errorf("%w: %q: host %q is not <account>.blob.core.windows.net or <account>.dfs.core.windows.net", ErrURL, location, host)
			}
			loc.Account = acct
		} else {
			loc.Container = u.Host
		}
	case "https", "http":
		host := strings.ToLower(u.Hostname())
		acct, rest, _ := strings.Cut(host, ".")
		if rest != "blob.core.windows.net" {
			return Location{}, fmt.Errorf("%w: %q: host is not <account>.blob.core.windows.net", ErrURL, location)
		}
		loc.Account = acct
		loc.Container, loc.Prefix, _ = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	default:
		return Location{}, fmt.Errorf("%w: %q", ErrURL, location)
	}
	if loc.Container == "" {
		return Location{}, fmt.Errorf("%w: %q: no container (want az://container/prefix)", ErrURL, location)
	}
	return loc, nil
}

// openURL is the storeurl opener of Azure Blob locations.
func openURL(ctx context.Context, location string) (store.Reader, error) {
	loc, err := ParseURL(location)
	if err != nil {
		return nil, err
	}
	st, err := Open(ctx, loc.Account, loc.Container, loc.Prefix)
	if err != nil {
		return nil, fmt.Errorf("storeurl: %q: %w", location, err)
	}
	return st, nil
}
