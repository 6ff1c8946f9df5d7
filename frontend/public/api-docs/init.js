// Starts Swagger UI on /api/docs (a file, not an inline script: the Content-Security-Policy allows none).
// Requests carry this tab's Poolscope session (frontend/src/api/session.ts keeps it in sessionStorage).
window.addEventListener('load', () => {
  window.SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    validatorUrl: null,
    requestInterceptor: (request) => {
      const token = sessionStorage.getItem('poolscope.session');
      if (token) request.headers.Authorization = `Bearer ${token}`;
      return request;
    },
  });
});
