//! SQL task stores (in progress).
