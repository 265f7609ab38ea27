"""What is certified: wheels (pockets in wheel order, colours, sections, symbols), cards, shoes."""
