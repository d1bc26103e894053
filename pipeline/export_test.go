package pipeline

// ShardCost is shardCost, for tests.
var ShardCost = shardCost
