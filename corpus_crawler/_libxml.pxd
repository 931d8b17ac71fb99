# cython: language_level=3
"""Reading libxml2's nodes as lxml reads them: shared by the compiled walks
(`_segment_fast.pyx`, `_kimatu_fast.pyx`). Inline functions only; nothing here
links against libxml2 or modifies a node."""

from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport strcmp, strlen
from lxml.includes.tree cimport XML_CDATA_SECTION_NODE, XML_TEXT_NODE, xmlAttr, xmlNode


cdef inline str node_text(xmlNode* node):
    """A text node's content ("" for none)."""
    cdef const char* content = <const char*>node.content
    if content == NULL:
        return ""
    return PyUnicode_DecodeUTF8(content, strlen(content), "replace")


cdef inline str node_name(xmlNode* node):
    cdef const char* name = <const char*>node.name
    return PyUnicode_DecodeUTF8(name, strlen(name), "replace")


cdef inline xmlAttr* find_attribute(xmlNode* node, const char* name) noexcept:
    """The element's first attribute of that name (as `el.get` finds it), or NULL."""
    cdef xmlAttr* attr = node.properties
    while attr != NULL:
        if strcmp(<const char*>attr.name, name) == 0:
            return attr
        attr = attr.next
    return NULL


cdef inline str attribute_text(xmlAttr* attr):
    """An attribute's value, as `el.get` gives it."""
    cdef xmlNode* child = attr.children
    cdef str value = ""
    while child != NULL:
        if child.content != NULL:
            value += node_text(child)
        child = child.next
    return value


cdef inline bint is_text(xmlNode* node) noexcept:
    return node.type == XML_TEXT_NODE or node.type == XML_CDATA_SECTION_NODE


cdef inline str text_run(xmlNode* first, xmlNode** after):
    """The text of `first` (a text or CDATA node) and of those right after it: one
    `.text` or `.tail` for lxml. `after` gets the node that ends the run."""
    cdef str content = node_text(first)
    cdef xmlNode* last = first
    while last.next != NULL and is_text(last.next):
        last = last.next
        content = content + node_text(last)
    after[0] = last.next
    return content
