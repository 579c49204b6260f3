# Host side of the emulated-machine tests: boots the guest from tools/vm with
# the project's binaries, policies and guest scripts, runs one scenario from
# tests/vm/guest/, and keeps its /result in $BUILD/vm/NAME.result.
# Sourced by tests/vm/*.sh (and by `make demo`).
BUILD=${BUILD:-build}
vm_scenario() {
	local name=$1
	shift
	local adds=(
		--add "$BUILD/cxltierd" --add "$BUILD/cxltierctl" --add "$BUILD/tierbench"
		--add "$(command -v jq)"
		--add-dir "$BUILD/policies:/usr/lib/cxltier/policies"
		--add-dir "$BUILD/tests/policies:/usr/lib/cxltier/test-policies"
		--add-dir "tests/vm/guest:/tests"
	)
	mkdir -p "$BUILD/vm"
	tools/vm/run -q --timeout "${VM_TIMEOUT:-300}" "${adds[@]}" \
		--result "$BUILD/vm/$name.result" "$@" "tests/vm/guest/$name.sh"
}
