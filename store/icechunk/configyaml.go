package icechunk

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// A spec 1 repository keeps its configuration in config.yaml, as the
// core's serde_yaml writes a RepositoryConfig: a mapping of every field,
// unset ones null, enum values tagged (store: !http {},
// store: !local_file_system /dir).

// maxConfigYAML bounds the size of a config.yaml read.
const maxConfigYAML = 1 << 20

// encodeConfigYAML writes the config.yaml of a spec 1 repository recording
// cs (configValue's fields, in the core's order).
func encodeConfigYAML(cs []Container) ([]byte, error) {
	cfg := configValue(cs)
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range configFields {
		root.Content = append(root.Content, yamlScalar(k), yamlValue(cfg[k], k == "store"))
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func yamlScalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// yamlValue is v as YAML; with tagged, v is a one-key map, an externally
// tagged enum, written as its content under the tag !key.
func yamlValue(v any, tagged bool) *yaml.Node {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
	case string:
		return yamlScalar(x)
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		if tagged && len(keys) == 1 {
			n := yamlValue(x[keys[0]], false)
			n.Tag = "!" + keys[0]
			if n.Kind == yaml.MappingNode && len(n.Content) == 0 {
				n.Style = yaml.FlowStyle
			}
			return n
		}
		n := &yaml.Node{Kind: yaml.MappingNode}
		if fields := fieldOrder(keys); fields != nil {
			keys = fields
		}
		for _, k := range keys {
			n.Content = append(n.Content, yamlScalar(k), yamlValue(x[k], k == "store"))
		}
		if len(keys) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n
	}
	return yamlValue(nil, false)
}

// fieldOrder returns the fields of S3Options or VirtualChunkContainer in
// the core's order when keys (sorted) are exactly those, else nil.
func fieldOrder(keys []string) []string {
	for _, fields := range [][]string{s3Fields, containerFields} {
		if len(keys) == len(fields) && !slices.ContainsFunc(fields, func(k string) bool {
			_, ok := slices.BinarySearch(keys, k)
			return !ok
		}) {
			return fields
		}
	}
	return nil
}

// containerFields are VirtualChunkContainer's fields, in the core's order.
var containerFields = []string{"name", "url_prefix", "store"}

// decodeConfigYAML reads the named virtual chunk containers of a spec 1
// config.yaml. Aliases are not followed and the nodes visited are bounded.
func decodeConfigYAML(data []byte) (map[string]string, error) {
	if len(data) > maxConfigYAML {
		return nil, fmt.Errorf("%w: config.yaml of %d bytes, limit %d", ErrTooLarge, len(data), maxConfigYAML)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: config.yaml: %v", ErrCorrupt, err)
	}
	if doc.Kind == 0 {
		return nil, nil // empty file
	}
	budget := 1 << 16
	v, err := yamlAny(&doc, 0, &budget)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	vccs, _ := m["virtual_chunk_containers"].(map[string]any)
	return namedContainers(vccs), nil
}

// yamlAny converts a YAML node to a JSON-like value: mappings with string
// keys, sequences, scalars as strings (null as nil); aliases are nil.
func yamlAny(n *yaml.Node, depth int, budget *int) (any, error) {
	if *budget--; *budget < 0 || depth > 32 {
		return nil, fmt.Errorf("%w: config.yaml nests too deep or has too many nodes", ErrCorrupt)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, fmt.Errorf("%w: config.yaml holds %d documents", ErrCorrupt, len(n.Content))
		}
		return yamlAny(n.Content[0], depth+1, budget)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%w: config.yaml: a key that is no string", ErrCorrupt)
			}
			v, err := yamlAny(n.Content[i+1], depth+1, budget)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlAny(c, depth+1, budget)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		return n.Value, nil
	}
	return nil, nil
}
