// the page (owned by the page helper)
