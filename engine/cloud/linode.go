package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linode/linodego"
)

// LinodeDefaultImage is used when a CreateRequest names no image.
const LinodeDefaultImage = "linode/debian12"

// Linode provisions through the Linode API v4 with linodego.
type Linode struct {
	client linodego.Client
	red    redactor
	settle time.Duration
}

// NewLinode returns a provider for the Linode API at baseURL ("" is the public API;
// "http://127.0.0.1:1234" and "https://api.linode.com/v4" are both accepted).
// httpClient may be nil; its Timeout bounds each call.
func NewLinode(token, baseURL string, httpClient *http.Client) (*Linode, error) {
	if token == "" {
		return nil, fmt.Errorf("linode: no API token")
	}
	c := linodego.NewClient(authedClient(httpClient, token))
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("linode: API URL %q needs a scheme and host", baseURL)
		}
		if strings.Trim(u.Path, "/") == "" {
			c.SetBaseURL(baseURL)
		} else if _, err := c.UseURL(baseURL); err != nil {
			return nil, fmt.Errorf("linode: %w", err)
		}
	}
	// The provisioning queue owns retries and backoff; linodego's own would retry a 429
	// or 503 up to 1000 times inside one call, invisibly.
	c.SetRetryCount(0)
	// LINODE_DEBUG in the environment would make resty log request bodies, and a
	// create's body holds the root password.
	c.SetDebug(false)
	// A cached GET would hide an instance's progress from provisioning to running.
	c.UseCache(false)
	return &Linode{client: c, red: newRedactor(token)}, nil
}

// Name is "linode".
func (l *Linode) Name() string { return "linode" }

// Create asks for one instance tagged "hangar". If the label is already taken (Linode
// labels are unique per account) the existing instance is returned, so a create whose
// answer was lost cannot make a second server.
func (l *Linode) Create(ctx context.Context, req CreateRequest) (Instance, error) {
	image := req.Image
	if image == "" {
		image = LinodeDefaultImage
	}
	opts := linodego.InstanceCreateOptions{
		Label:          req.Label,
		Region:         req.Region,
		Type:           req.Plan,
		Image:          image,
		RootPass:       req.RootPassword,
		AuthorizedKeys: req.SSHKeys,
		Tags:           []string{Tag},
	}
	cctx, x := withExchange(ctx)
	in, err := l.client.CreateInstance(cctx, opts)
	if err != nil {
		cerr := classify(ctx, l.Name(), "create", x, err, append(newRedactor(req.RootPassword), l.red...))
		if !labelTaken(err) {
			return Instance{}, cerr
		}
		found, ok, ferr := l.FindByLabel(ctx, req.Label)
		switch {
		case ferr != nil:
			return Instance{}, ferr
		case !ok:
			return Instance{}, cerr
		case req.Fresh:
			return Instance{}, fmt.Errorf("%w (the label belongs to server %s, which this order's first attempt did not make: not adopted)", cerr, found.ID)
		case !req.NotBefore.IsZero() && !found.Created.IsZero() && found.Created.Before(req.NotBefore):
			return Instance{}, fmt.Errorf("%w (the label belongs to server %s, made %s, before this order: not adopted)",
				cerr, found.ID, found.Created.UTC().Format(time.RFC3339))
		}
		return found, nil
	}
	return linodeInstance(in), nil
}

// labelTaken recognises Linode's answer to a duplicate label.
func labelTaken(err error) bool {
	return linodego.ErrHasStatus(err, http.StatusBadRequest) &&
		strings.Contains(strings.ToLower(err.Error()), "label must be unique")
}

// FindByLabel lists instances filtered by exact label.
func (l *Linode) FindByLabel(ctx context.Context, label string) (Instance, bool, error) {
	filter, err := json.Marshal(map[string]string{"label": label})
	if err != nil {
		return Instance{}, false, &Error{Op: "find", Provider: l.Name(), Err: err}
	}
	cctx, x := withExchange(ctx)
	list, err := l.client.ListInstances(cctx, linodego.NewListOptions(0, string(filter)))
	if err != nil {
		return Instance{}, false, classify(ctx, l.Name(), "find", x, err, l.red)
	}
	for i := range list {
		if list[i].Label == label {
			return linodeInstance(&list[i]), true, nil
		}
	}
	return Instance{}, false, nil
}

// Get reads one instance by id.
func (l *Linode) Get(ctx context.Context, id string) (Instance, error) {
	n, err := linodeID(id)
	if err != nil {
		return Instance{}, &Error{Op: "get", Provider: l.Name(), Status: http.StatusNotFound, Err: err}
	}
	cctx, x := withExchange(ctx)
	in, err := l.client.GetInstance(cctx, n)
	if err != nil {
		return Instance{}, classify(ctx, l.Name(), "get", x, err, l.red)
	}
	return linodeInstance(in), nil
}

// Delete removes one instance; one that is already gone counts as deleted.
func (l *Linode) Delete(ctx context.Context, id string) error {
	n, err := linodeID(id)
	if err != nil {
		return &Error{Op: "delete", Provider: l.Name(), Err: err}
	}
	cctx, x := withExchange(ctx)
	if err := l.client.DeleteInstance(cctx, n); err != nil {
		if linodego.IsNotFound(err) {
			return nil
		}
		return classify(ctx, l.Name(), "delete", x, err, l.red)
	}
	return nil
}

func linodeID(id string) (int, error) {
	n, err := strconv.Atoi(id)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid linode id %q", id)
	}
	return n, nil
}

func linodeInstance(in *linodego.Instance) Instance {
	out := Instance{
		ID:     strconv.Itoa(in.ID),
		Label:  in.Label,
		Status: string(in.Status),
		Region: in.Region,
		Plan:   in.Type,
	}
	if in.Created != nil {
		out.Created = *in.Created
	}
	// Linode lists public addresses before private ones.
	for _, ip := range in.IPv4 {
		if ip != nil && !ip.IsPrivate() {
			out.IPv4 = ip.String()
			break
		}
	}
	return out
}

// PowerOff shuts the instance down (POST /v4/linode/instances/{id}/shutdown); Linode
// keeps billing a stopped instance, but the user loses its use until it is paid.
func (l *Linode) PowerOff(ctx context.Context, id string) error { return l.power(ctx, "power_off", id) }

// PowerOn boots the instance with its last configuration (POST …/{id}/boot).
func (l *Linode) PowerOn(ctx context.Context, id string) error { return l.power(ctx, "power_on", id) }

func (l *Linode) power(ctx context.Context, op, id string) error {
	n, err := linodeID(id)
	if err != nil {
		return &Error{Op: op, Provider: l.Name(), Err: err}
	}
	cctx, x := withExchange(ctx)
	if op == "power_off" {
		err = l.client.ShutdownInstance(cctx, n)
	} else {
		err = l.client.BootInstance(cctx, n, 0)
	}
	if err != nil {
		return classify(ctx, l.Name(), op, x, err, l.red)
	}
	return nil
}
