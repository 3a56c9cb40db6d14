"""What counts as a function, a class, a namespace or a comment in each grammar, and how to read a
definition's name: the per-language knowledge of the syntax chunker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

BODY_TYPES = frozenset(
    {
        "block", "class_body", "declaration_list", "field_declaration_list", "body_statement",
        "interface_body", "enum_body", "statement_block", "compound_statement", "enum_member_declaration_list",
        "enum_variant_list", "object_type",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Spec:
    functions: frozenset[str]
    classes: frozenset[str]
    # Containers without a chunk of their own (namespaces, modules): their members are chunked.
    namespaces: frozenset[str] = frozenset()
    # Nodes around a definition (export, decorators, templates): the definition is inside.
    wrappers: frozenset[str] = frozenset()
    # Declarations that are functions when their value is one (`const f = () => …`).
    variables: frozenset[str] = frozenset()
    function_values: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})
    # Function nodes that are always methods (Go's method_declaration).
    methods: frozenset[str] = frozenset()
    name_of: Callable[[Node], str] | None = None
    # The class a function belongs to when it says so itself (a Go receiver, C++'s Point::area).
    owner_of: Callable[[Node], str] = field(default=lambda node: "")


def text_of(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def field_name(node: Node) -> str:
    return text_of(node.child_by_field_name("name"))


def body_of(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in reversed(node.named_children):
        if child.type in BODY_TYPES:
            return child
    return None


# --- C and C++ -----------------------------------------------------------------------------------


def _declarator_name(node: Node | None) -> Node | None:
    """The innermost name of a C declarator chain (pointer, reference, function declarators)."""
    while node is not None and node.child_by_field_name("declarator") is not None:
        node = node.child_by_field_name("declarator")
    return node


def _c_name(node: Node) -> str:
    if node.type == "function_definition":
        name = _declarator_name(node.child_by_field_name("declarator"))
        if name is not None and name.type == "qualified_identifier":
            return text_of(name.child_by_field_name("name"))
        return text_of(name)
    if node.type == "type_definition":
        return text_of(node.child_by_field_name("declarator"))
    return field_name(node)


def _c_owner(node: Node) -> str:
    name = _declarator_name(node.child_by_field_name("declarator"))
    if name is not None and name.type == "qualified_identifier":
        return text_of(name.child_by_field_name("scope"))
    return ""


# --- Go ------------------------------------------------------------------------------------------


def _go_name(node: Node) -> str:
    if node.type == "type_declaration":
        return ", ".join(field_name(spec) for spec in node.named_children if spec.type in ("type_spec", "type_alias"))
    return field_name(node)


def _go_owner(node: Node) -> str:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    for parameter in receiver.named_children:
        kind = parameter.child_by_field_name("type")
        while kind is not None and kind.type in ("pointer_type", "generic_type"):
            kind = kind.named_children[0] if kind.named_children else None
        return text_of(kind)
    return ""


# --- Rust ----------------------------------------------------------------------------------------


def _rust_name(node: Node) -> str:
    if node.type == "impl_item":
        kind = node.child_by_field_name("type")
        while kind is not None and kind.type == "generic_type":
            kind = kind.child_by_field_name("type")
        return text_of(kind)
    return field_name(node)


# --- JavaScript / TypeScript ---------------------------------------------------------------------


def _js_name(node: Node) -> str:
    if node.type in ("lexical_declaration", "variable_declaration"):
        return ", ".join(field_name(d) for d in node.named_children if d.type == "variable_declarator")
    if node.type in ("expression_statement",):
        target = node.named_children[0].child_by_field_name("left") if node.named_children else None
        if target is not None and target.type == "member_expression":
            return text_of(target.child_by_field_name("property"))
        return text_of(target)
    return field_name(node) or "default"


_JS_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "method_definition"})
_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})

JAVASCRIPT = Spec(
    functions=_JS_FUNCTIONS | {"function_expression"},
    classes=frozenset({"class_declaration", "class"}),
    wrappers=frozenset({"export_statement"}),
    variables=frozenset({"lexical_declaration", "variable_declaration", "expression_statement"}),
    function_values=_JS_FUNCTION_VALUES,
    name_of=_js_name,
)

TYPESCRIPT = Spec(
    functions=_JS_FUNCTIONS | {"function_expression", "function_signature"},
    classes=frozenset(
        {"class_declaration", "abstract_class_declaration", "class", "interface_declaration", "enum_declaration"}
    ),
    namespaces=frozenset({"internal_module", "module"}),
    wrappers=frozenset({"export_statement", "ambient_declaration"}),
    variables=frozenset({"lexical_declaration", "variable_declaration", "expression_statement"}),
    function_values=_JS_FUNCTION_VALUES,
    name_of=_js_name,
)

SPECS: dict[str, Spec] = {
    "python": Spec(
        functions=frozenset({"function_definition"}),
        classes=frozenset({"class_definition"}),
        wrappers=frozenset({"decorated_definition"}),
    ),
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "tsx": TYPESCRIPT,
    "go": Spec(
        functions=frozenset({"function_declaration", "method_declaration"}),
        classes=frozenset({"type_declaration"}),
        methods=frozenset({"method_declaration"}),
        name_of=_go_name,
        owner_of=_go_owner,
    ),
    "rust": Spec(
        functions=frozenset({"function_item", "function_signature_item"}),
        classes=frozenset({"struct_item", "enum_item", "union_item", "trait_item", "impl_item"}),
        namespaces=frozenset({"mod_item"}),
        comments=frozenset({"line_comment", "block_comment", "attribute_item"}),
        name_of=_rust_name,
    ),
    "java": Spec(
        functions=frozenset({"method_declaration", "constructor_declaration", "compact_constructor_declaration"}),
        classes=frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            }
        ),
        comments=frozenset({"line_comment", "block_comment"}),
    ),
    "c": Spec(
        functions=frozenset({"function_definition"}),
        classes=frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
        name_of=_c_name,
    ),
    "cpp": Spec(
        functions=frozenset({"function_definition"}),
        classes=frozenset({"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}),
        namespaces=frozenset({"namespace_definition", "linkage_specification"}),
        wrappers=frozenset({"template_declaration"}),
        name_of=_c_name,
        owner_of=_c_owner,
    ),
    "csharp": Spec(
        functions=frozenset(
            {
                "method_declaration",
                "constructor_declaration",
                "destructor_declaration",
                "operator_declaration",
                "local_function_statement",
            }
        ),
        classes=frozenset(
            {
                "class_declaration",
                "struct_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "record_struct_declaration",
            }
        ),
        namespaces=frozenset({"namespace_declaration", "file_scoped_namespace_declaration"}),
    ),
    "ruby": Spec(
        functions=frozenset({"method", "singleton_method"}),
        classes=frozenset({"class", "module", "singleton_class"}),
        name_of=lambda node: field_name(node) or "self",
    ),
    "php": Spec(
        functions=frozenset({"function_definition", "method_declaration"}),
        classes=frozenset({"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"}),
        namespaces=frozenset({"namespace_definition"}),
    ),
}
