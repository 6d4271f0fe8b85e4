//! Sources together: order, precedence, YAML, directories, vars files, errors, garbage.
