#ifndef MOONMOCK_CYAML_SHIM_H
#define MOONMOCK_CYAML_SHIM_H

// libyaml for `moonmock convert openapi SPEC.yaml`: the document loader (anchors and aliases
// resolved into shared nodes), read into JSON values by MoonmockImport's YAMLReader.
#ifndef YAML_H   // the vendored build included libyaml's own header first
#include <yaml.h>
#endif

// The node's fields Swift cannot reach through the union.
static inline const unsigned char *mm_yaml_scalar(yaml_node_t *node, size_t *length, int *style) {
    *length = node->data.scalar.length;
    *style = (int)node->data.scalar.style;
    return node->data.scalar.value;
}

static inline yaml_node_item_t *mm_yaml_sequence(yaml_node_t *node, size_t *count) {
    *count = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    return node->data.sequence.items.start;
}

static inline yaml_node_pair_t *mm_yaml_mapping(yaml_node_t *node, size_t *count) {
    *count = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    return node->data.mapping.pairs.start;
}

#endif
