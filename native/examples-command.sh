# Sourced by the interop scripts: EXAMPLES, the command that runs the examples jar on the provider
# FABRIC names (jna by default; ffm runs on $JAVA_HOME's JDK 22+, with the ffm module built:
# JAVA_HOME=<it> MODULE=ffm native/run-in-softroce.sh).
FABRIC=${FABRIC:-jna}
if [ "$FABRIC" = ffm ]; then
  [ -n "${JAVA_HOME:-}" ] && [ -d ffm/target/classes ] ||
    { echo "FABRIC=ffm needs JAVA_HOME (a JDK 22+) and the ffm module built" >&2; exit 2; }
  EXAMPLES=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED
    -cp examples/target/rdma-actors-examples.jar:ffm/target/classes io.rdmaactors.examples.Main)
else
  EXAMPLES=(java -jar examples/target/rdma-actors-examples.jar)
fi
