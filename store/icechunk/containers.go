package icechunk

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

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

// configContainers reads the named virtual chunk containers of a spec 2
// repository's configuration (a FlexBuffers map whose
// "virtual_chunk_containers" maps URL prefixes to {name, url_prefix, ...}).
func (r *Repository) configContainers() (map[string]string, error) {
	r.vccOnce.Do(func() {
		info := r.repoInfo()
		if r.spec != 2 || info == nil {
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
		for _, c := range vccs {
			cm, _ := c.(map[string]any)
			name, _ := cm["name"].(string)
			prefix, _ := cm["url_prefix"].(string)
			if name == "" || prefix == "" {
				continue
			}
			if r.vcc == nil {
				r.vcc = map[string]string{}
			}
			r.vcc[name] = prefix
		}
	})
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
func (r *Repository) resolveLocation(loc string) (string, error) {
	name, rel, ok, err := splitVCC(loc)
	if !ok || err != nil {
		return loc, err
	}
	prefix, ok := r.opts.containers[name]
	if !ok {
		cfg, err := r.configContainers()
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
	w := &writeRef{coords: coords, kind: refVirtual, location: ref.URL, offset: uint64(ref.Offset), length: uint64(ref.Length),
		etag: ref.Checksum.ETag, modified: modified}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch(path).chunks[coordsKey(coords)] = w
	return nil
}
