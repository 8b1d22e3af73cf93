package connector

// An object store bucket NAME is the JetStream stream OBJ_NAME.
const objStreamPrefix = "OBJ_"

// ObjectStream is the stream of object store bucket.
func ObjectStream(bucket string) string { return objStreamPrefix + bucket }
