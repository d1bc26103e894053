//go:build unix && !linux

package cache

const mapPopulate = 0

const mapNoReserve = 0
