"""The language server (pygls over stdio): a thin layer over the engines."""
