package icechunk

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/virtual"
)

// ErrContainer reports a vcc://NAME/PATH virtual chunk location whose
// container NAME is known neither to WithContainers nor to the
// repository's configuration, or whose PATH would leave the container.
var ErrContainer = errors.New("icechunk: virtual chunk container")

// WithContainers maps the virtual chunk containers of vcc://NAME/PATH
// locations onto URL prefixes: containers[NAME] (a URL or local directory,
// such as "s3://bucket/data/"; a missing trailing "/" is added) followed by
// PATH is the URL read, through the resolver of WithVirtual and so within
// its allow-list, with the chunk's recorded checksum as the read's
// condition. These take precedence over the named containers of the
// repository's configuration (spec 2), which are used for the other names
// (their prefixes are just as subject to the allow-list).
func WithContainers(containers map[string]string) Option {
	return func(o *options) {
		if o.containers == nil {
			o.containers = map[string]string{}
		}
		for k, v := range containers {
			o.containers[k] = v
		}
	}
}

// configContainers reads the named virtual chunk containers of the
// repository's configuration: a spec 2 repo object's FlexBuffers config,
// a spec 1 repository's config.yaml (none when it has no such file), whose
// "virtual_chunk_containers" maps URL prefixes to {name, url_prefix, ...}.
func (r *Repository) configContainers(ctx context.Context) (map[string]string, error) {
	r.vccMu.Lock()
	defer r.vccMu.Unlock()
	if r.vccDone {
		return r.vcc, r.vccErr
	}
	func() {
		if r.spec == 1 {
			b, err := r.src.Get(ctx, "config.yaml", store.Full())
			if errors.Is(err, store.ErrNotFound) {
				return
			}
			if err == nil {
				r.vcc, err = decodeConfigYAML(b)
			}
			r.vccErr = err
			return
		}
		info := r.repoInfo()
		if info == nil {
			return
		}
		cfg, err := info.root.bytes(riConfig, false)
		if err != nil || len(cfg) == 0 {
			r.vccErr = err
			return
		}
		v, err := decodeFlex(cfg)
		if err != nil {
			r.vccErr = fmt.Errorf("repo: configuration: %w", err)
			return
		}
		m, _ := v.(map[string]any)
		vccs, _ := m["virtual_chunk_containers"].(map[string]any)
		r.vcc = namedContainers(vccs)
	}()
	if r.vccErr != nil && ctx.Err() != nil {
		err := r.vccErr // this read's cancellation: the next one tries again
		r.vccErr = nil
		return nil, err
	}
	r.vccDone = true
	return r.vcc, r.vccErr
}

// splitVCC splits a vcc://NAME/PATH location (ok false for others),
// refusing a PATH that would leave its container.
func splitVCC(loc string) (name, rel string, ok bool, err error) {
	if len(loc) < 6 || !strings.EqualFold(loc[:6], "vcc://") {
		return "", "", false, nil
	}
	name, rel, found := strings.Cut(loc[6:], "/")
	if !found || name == "" || rel == "" {
		return "", "", true, fmt.Errorf("%w: %q names no container and path", ErrContainer, loc)
	}
	// no empty, "." or ".." segment, escaped or not, no query or fragment
	for seg := range strings.SplitSeq(rel, "/") {
		u, err := url.PathUnescape(seg)
		if err != nil || u == "" || u == "." || u == ".." || strings.ContainsAny(u, "/\\?#") {
			return "", "", true, fmt.Errorf("%w: %q: its path leaves the container or is no plain path", ErrContainer, loc)
		}
	}
	return name, rel, true, nil
}

// resolveLocation turns a vcc://NAME/PATH location into the URL it names;
// other locations are returned as they are.
func (r *Repository) resolveLocation(ctx context.Context, loc string) (string, error) {
	name, rel, ok, err := splitVCC(loc)
	if !ok || err != nil {
		return loc, err
	}
	prefix, ok := r.opts.containers[name]
	if !ok {
		cfg, err := r.configContainers(ctx)
		if err != nil {
			return "", err
		}
		if prefix, ok = cfg[name]; !ok {
			return "", fmt.Errorf("%w: %q: no container %q (give its URL prefix with WithContainers)", ErrContainer, loc, name)
		}
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return prefix + rel, nil
}

// SetVirtual stores a virtual chunk reference at key (a chunk key of an
// array of the session): the chunk is ref.Length bytes at ref.Offset of
// the object at ref.URL (an absolute URL, or vcc://NAME/PATH in a virtual
// chunk container), and ref.Checksum (an ETag, or a modification time in
// whole seconds) is what readers will require of it.
func (s *Session) SetVirtual(ctx context.Context, key string, ref virtual.Ref) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ref.Validate(); err != nil {
		return err
	}
	if !strings.Contains(ref.URL, "://") {
		return fmt.Errorf("%w: %q: a virtual chunk location is an absolute URL or vcc://NAME/PATH", virtual.ErrInvalidRef, ref.URL)
	}
	if _, _, _, err := splitVCC(ref.URL); err != nil {
		return err // (a container's prefix is given when reading)
	}
	var modified uint32
	if t := ref.Checksum.LastModified; !t.IsZero() {
		if t.Unix() <= 0 || t.Unix() >= 1<<32 || t.Truncate(time.Second) != t {
			return fmt.Errorf("%w: modification time %v is not whole seconds from 1970 to 2106", virtual.ErrInvalidRef, t)
		}
		modified = uint32(t.Unix())
	}
	s.mu.Lock()
	path, coords, ok := s.locate(key)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("set virtual %q: %w: not a chunk of an array in the session", key, virtual.ErrInvalidRef)
	}
	w := &writeRef{coords: coords, chunkRef: chunkRef{kind: refVirtual, location: ref.URL, offset: uint64(ref.Offset), length: uint64(ref.Length),
		etag: ref.Checksum.ETag, modified: modified}}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch(path).chunks[coordsKey(coords)] = w
	return nil
}

// Container is a virtual chunk container as a repository's configuration
// records it (Icechunk's VirtualChunkContainer): the URL prefix its
// virtual chunks live under, an optional name for vcc:// locations, and
// how the official core reaches the prefix (http:// and https:// through
// an HTTP store, s3:// through S3 with the S3 fields below, file:/// on
// the local filesystem). Recording a container allows nothing by itself:
// gozarr reads through the resolver of WithVirtual and its allow-list, and
// the core through its own authorization of the prefix. (The core's wasm
// build has no filesystem store: it cannot open a repository whose
// configuration has a file:/// container; its native build can.)
type Container struct {
	// Name, when set, makes vcc://Name/PATH the location URLPrefix+PATH.
	// It is not empty and has no "/".
	Name string
	// URLPrefix is a URL ending in "/": "https://host/data/",
	// "s3://bucket/prefix/", "file:///abs/dir/".
	URLPrefix string
	// S3 only: the region, an endpoint URL (S3-compatible servers),
	// unsigned requests, plain http allowed, path-style addressing.
	S3Region, S3Endpoint                  string
	S3Anonymous, S3AllowHTTP, S3PathStyle bool
}

// WithConfigContainers makes Create record containers in the new
// repository's configuration (the repo object's config for spec 2,
// config.yaml for spec 1), as the official core's repository
// configuration does: other clients then find where its virtual chunks
// live, and vcc://NAME/... locations resolve by the names given. A bad
// container (no URL prefix ending in "/", a scheme other than http,
// https, s3 and file, a name with "/", a prefix given twice) makes Create
// fail with ErrContainer before it writes anything.
func WithConfigContainers(cs ...Container) Option {
	return func(o *options) { o.newContainers = append(o.newContainers, cs...) }
}

// checkContainers validates containers for the configuration.
func checkContainers(cs []Container) error {
	seen := map[string]bool{}
	for _, c := range cs {
		u, err := url.Parse(c.URLPrefix)
		if err != nil || !strings.HasSuffix(c.URLPrefix, "/") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("%w: URL prefix %q is no URL ending in /", ErrContainer, c.URLPrefix)
		}
		switch u.Scheme {
		case "http", "https", "s3":
			if u.Host == "" {
				return fmt.Errorf("%w: URL prefix %q names no host or bucket", ErrContainer, c.URLPrefix)
			}
		case "file":
			if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
				return fmt.Errorf("%w: URL prefix %q is no file:///absolute/dir/", ErrContainer, c.URLPrefix)
			}
		default:
			return fmt.Errorf("%w: URL prefix %q: scheme %q (http, https, s3 and file are known)", ErrContainer, c.URLPrefix, u.Scheme)
		}
		if c.Name != "" && strings.Contains(c.Name, "/") {
			return fmt.Errorf("%w: container name %q has a /", ErrContainer, c.Name)
		}
		if seen[c.URLPrefix] || c.Name != "" && seen["\x00"+c.Name] {
			return fmt.Errorf("%w: container %q (%q) given twice", ErrContainer, c.URLPrefix, c.Name)
		}
		seen[c.URLPrefix], seen["\x00"+c.Name] = true, c.Name != ""
	}
	return nil
}

// configValue is the repository configuration recording cs, as the core
// serializes its RepositoryConfig: every field, unset ones null. The
// object store of a container is an externally tagged enum ({"http": {}},
// {"s3": {...}}, {"local_file_system": "/dir"}); storeTag and storeValue
// give its tag and content (YAML writes the tag as !tag).
func configValue(cs []Container) map[string]any {
	vcc := map[string]any{}
	for _, c := range cs {
		var name any
		if c.Name != "" {
			name = c.Name
		}
		tag, val := containerStore(c)
		vcc[c.URLPrefix] = map[string]any{"name": name, "url_prefix": c.URLPrefix, "store": map[string]any{tag: val}}
	}
	cfg := map[string]any{"virtual_chunk_containers": vcc}
	for _, k := range configFields {
		if _, ok := cfg[k]; !ok {
			cfg[k] = nil
		}
	}
	return cfg
}

// configFields are RepositoryConfig's fields, in the core's order.
var configFields = []string{"inline_chunk_threshold_bytes", "get_partial_values_concurrency", "compression",
	"max_concurrent_requests", "max_concurrent_decodes", "caching", "storage", "virtual_chunk_containers",
	"manifest", "previous_file", "repo_update_retries", "num_updates_per_repo_info_file"}

// s3Fields are S3Options' fields, in the core's order.
var s3Fields = []string{"region", "endpoint_url", "anonymous", "allow_http", "force_path_style",
	"network_stream_timeout_seconds", "requester_pays", "checksum_algorithm"}

// containerStore is the tag and content of c's ObjectStoreConfig.
func containerStore(c Container) (string, any) {
	u, _ := url.Parse(c.URLPrefix) // checked by checkContainers
	switch u.Scheme {
	case "s3":
		opt := func(s string) any {
			if s == "" {
				return nil
			}
			return s
		}
		return "s3", map[string]any{"region": opt(c.S3Region), "endpoint_url": opt(c.S3Endpoint),
			"anonymous": c.S3Anonymous, "allow_http": c.S3AllowHTTP, "force_path_style": c.S3PathStyle,
			"network_stream_timeout_seconds": nil, "requester_pays": false, "checksum_algorithm": nil}
	case "file":
		return "local_file_system", strings.TrimSuffix(u.Path, "/")
	}
	return "http", map[string]any{}
}

// namedContainers picks the named containers out of a decoded
// configuration's virtual_chunk_containers (prefix → {name, url_prefix}).
func namedContainers(vccs map[string]any) map[string]string {
	var out map[string]string
	for _, c := range vccs {
		cm, _ := c.(map[string]any)
		name, _ := cm["name"].(string)
		prefix, _ := cm["url_prefix"].(string)
		if name == "" || prefix == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = prefix
	}
	return out
}
